"""What the server tells an agent: the ``initialize`` instructions (built from the levels of
the mounts actually open) and the guidance documents served as prompts
(reference/server.md §1.2, §1.5). Our own words; the tool names and trigger phrases are the
reference's. The documents themselves live in :mod:`ynm.model.guidance`, which the agent client
integrations share."""

from __future__ import annotations

from ynm.model.guidance import SESSION_START, WHEN_TO_PROMOTE, WHEN_TO_REMEMBER

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


PROMPTS = {
    "memory-session-start": SESSION_START,
    "memory-when-to-remember": WHEN_TO_REMEMBER,
    "memory-when-to-promote": WHEN_TO_PROMOTE,
}
