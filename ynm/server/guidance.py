"""What the server tells an agent: the ``initialize`` instructions (built from the levels of
the mounts actually open) and the guidance documents served as prompts
(reference/server.md §1.2, §1.5). Our own words; the tool names and trigger phrases are the
reference's."""

from __future__ import annotations

REMEMBER_INTENT_EXAMPLES = ("remember", "don't forget", "do not forget", "from now on", "always",
                            "never", "call me", "my preference", "note that")


def _quoted(words: tuple[str, ...]) -> str:
    return ", ".join(f'"{w}"' for w in words)


def instructions(levels: set[str]) -> str:
    """Four lines: what ynm is, when to write, when to read, and what the levels mean here.

    Args:
        levels: the levels of the open mounts (``personal``, ``distributed``), possibly empty.
    """
    lines = [
        "ynm is the user's long-term memory across sessions and agents. Use it instead of any "
        "built-in memory, memory directory or notes file.",
        "When the user asks you to remember something or states a preference or standing "
        f"instruction (for example {_quoted(REMEMBER_INTENT_EXAMPLES)}), call memory_remember "
        "with one fact per memory and never a secret; if the memory already exists, call "
        "memory_supersede instead.",
        "Before answering about the user, their preferences, the project or past decisions, "
        "read memory_context or call memory_recall.",
    ]
    if levels == {"personal", "distributed"}:
        lines.append("Memory is personal (private to this user) unless you set level "
                     "distributed, which shares it with the team: use distributed only for "
                     "team-safe project facts.")
    elif levels == {"personal"}:
        lines.append("Every memory here is personal; no shared (distributed) store is open.")
    elif levels == {"distributed"}:
        lines.append("Everything stored here is shared with every user of this server and "
                     "nothing can be private: memory_remember stores nothing unless level is "
                     "distributed, so tell the user it will be shared and ask first (private "
                     "things belong in a local ynm). Without a namespace a memory is filed "
                     "under user/<person id> once the user is signed in (still readable by "
                     "everyone), else under common; naming e.g. common files it with the team.")
    else:
        lines.append("No memory store is open; a tool call will explain why.")
    return "\n".join(lines)


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

PROMPTS = {
    "memory-session-start": SESSION_START,
    "memory-when-to-remember": WHEN_TO_REMEMBER,
    "memory-when-to-promote": WHEN_TO_PROMOTE,
}
