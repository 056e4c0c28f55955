"""The guidance ynm gives agents, as text: the documents ``ynm serve`` offers as prompts
(reference/server.md §1.5, §4.4) and the short memory section ``ynm client install`` writes into
an agent client's instruction file or skill (reference/server.md §4.1). One source, so the server
and the client integrations never drift apart. Pure text, no I/O.

Memory types are the seed's six (:data:`ynm.model.records.MemoryType`); the tool names are the
MCP server's (reference/server.md §2).
"""

from __future__ import annotations

SESSION_START = """# Starting a session with ynm

1. Call `memory_session` with `action: start` (reuse the client's session id if you have one).
   You get the session's working namespace (`session/<id>`), the ttl for working memory, and a
   context block: what is already known, pinned memories first.
2. Read the context block before you start. For anything it does not cover, call
   `memory_recall` with a few words about the topic.
3. Scratch notes for this task go to `memory_remember` with type `working`, the session's
   namespace and its ttl. They expire on their own.
4. Lasting facts, preferences and decisions get their own memory (type `semantic`,
   `procedural`, `episodic` ...), not a working note.
5. When the task is done, call `memory_session` with `action: end` and the session id.
"""

WHEN_TO_REMEMBER = """# When to remember

Call `memory_remember` when:
- the user asks you to remember something, or says "from now on", "always", "never",
  "call me", "my preference", "note that", "don't forget";
- the user states a preference or a standing instruction;
- a decision is made that a later session should know (and why it was made);
- you learn a non-obvious fact about the project: a convention, a command, a gotcha.

How:
- One fact per memory, in a sentence that stands on its own.
- Pick the type: `semantic` for facts, `procedural` for how-to, `episodic` for what happened,
  `reflective` for lessons, `reference` for pointers, `working` for session scratch.
- Never store secrets, tokens, passwords or personal data the user did not ask you to keep.
- If a memory about the same thing exists (recall first when unsure), call
  `memory_supersede` with its id instead of writing a duplicate.
- Wrong or obsolete memory: `memory_forget` it, with a reason.
"""

WHEN_TO_PROMOTE = """# When to share (promote) a memory

Personal memory is private to the user. Shared (level `distributed`) memory is read by everyone
who works on the project.

Share a memory only when:
- it is about the project, not the person (a build command, a convention, a decision);
- it holds nothing private or secret;
- the user agrees, or it is a project fact that is already public in the repository.

How: write it with `memory_remember` and `level: distributed`, usually in namespace `common`
or a team namespace. Keep personal preferences personal.
"""

MEMORY_SECTION = """## Long-term memory (ynm)

This project keeps long-term memory in ynm, reached through the `memory_*` tools. Use it instead
of any built-in memory, memory directory or notes file.

- **Recall** at the start of a task, and before answering about the user, their preferences, the
  project or past decisions: read `memory_context`, or call `memory_recall` with a few key words.
- **Remember** with `memory_remember` (one fact per memory, in a sentence that stands on its own,
  never a secret) when the user asks you to ("remember", "from now on", "always", "never",
  "note that" ...), states a preference, a decision is made, or you learn a non-obvious fact.
  Pick the type:
  - `semantic`: facts, preferences and conventions;
  - `procedural`: how to do something (commands, steps, a release checklist);
  - `episodic`: what happened and why (a decision, an incident, a dead end);
  - `reflective`: a lesson drawn from several events;
  - `reference`: a pointer to a document, dashboard or URL;
  - `working`: scratch notes for this session only (they expire).
- **Supersede** rather than duplicate: when a memory on the same thing exists (recall first if
  unsure), call `memory_supersede` with its id; `memory_forget` what is wrong or obsolete.
- **Share** (`level: distributed`) only team-safe project facts; anything about the person stays
  personal.
"""
"""The memory section written between ynm's markers in an agent's instruction file
(``AGENTS.md``, ``CLAUDE.md``): when to recall, which type to remember, when to supersede."""


def skill(name: str = "ynm-memory") -> str:
    """An Agent Skills ``SKILL.md`` (YAML front matter, then markdown) carrying the memory
    section and the three guidance documents; written for clients that read skills (pi, ynh)."""
    return (f"---\nname: {name}\ndescription: Use long-term memory (ynm) deliberately: recall "
            "before answering, remember decisions and preferences with the right type, "
            "supersede rather than duplicate.\n---\n\n"
            f"{MEMORY_SECTION}\n{SESSION_START}\n{WHEN_TO_REMEMBER}\n{WHEN_TO_PROMOTE}")
