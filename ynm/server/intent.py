"""Remember intent in a user prompt, for the ``prompt`` hook (reference/server.md §4.3).

Store-free and import-light (only ``re``): the hook runs on every prompt.
"""

from __future__ import annotations

import re

# a trigger phrase at the start of a clause (or after "please"), after optional filler words
_PHRASES = (r"remember|don['’]t\s+forget|do\s+not\s+forget|from\s+now\s+on|always|never|"
            r"call\s+me|my\s+preference|note\s+that")
_FILLER = r"(?:(?:and|ok|okay|so|btw|also|oh|hey|now)\b[,]?\s+)*"
REMEMBER_INTENT = re.compile(
    rf"(?:^|[.!?;:\n]\s*|,\s*|\bplease\s+)\s*{_FILLER}(?:please\s+)?(?:{_PHRASES})\b",
    re.IGNORECASE,
)

NUDGE = ("The user wants something remembered: store it with the ynm tool memory_remember "
         "(one fact per memory; memory_supersede if it changes an existing memory), not in a "
         "notes or memory file.")


def has_remember_intent(prompt: str) -> bool:
    """True when ``prompt`` asks, in so many words, for something to be remembered."""
    return bool(REMEMBER_INTENT.search(prompt or ""))
