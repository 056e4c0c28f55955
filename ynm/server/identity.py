"""Who a request to ``ynm serve`` writes as: the actor, client, default namespace and whether
it may use ``memory_people``, from the verified caller (reference/server.md §2.5).

| Caller | Condition | actor | unnamed namespace | ``memory_people`` |
|---|---|---|---|---|
| signed-in person | token verified with ``sub`` and ``iss`` | ``user:<person id>`` (client = AuthInfo ``client_id``) | ``user/<person id>`` | allowed |
| static token | ``AuthInfo.static`` | ``token:static`` | ``common`` | refused |
| client-only token | no ``sub``, ``azp``/``client_id`` | ``client:<client id>`` | ``common`` | refused |
| verified token with neither | | the server's own actor | ``common`` | refused |
| no auth, stdio, CLI | ``auth`` is None | the server's own actor | the service's default | refused |

The person id is the people document's link for the login when it has one, else the id
derived from it (:func:`ynm.model.people.person_id`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ynm.model.namespaces import COMMON
from ynm.model.people import person_id
from ynm.service.people import Caller

if TYPE_CHECKING:
    from ynm.server.auth import AuthInfo

__all__ = ["STATIC_ACTOR", "Caller", "PersonResolver", "caller_for"]

STATIC_ACTOR = "token:static"


class PersonResolver(Protocol):
    """What resolves a login to a person id (:class:`ynm.service.people.People`)."""

    def person_for(self, issuer: str, subject: str) -> str: ...


def caller_for(auth: AuthInfo | None, server_actor: str,
               people: PersonResolver | None) -> Caller:
    """The :class:`Caller` of a request verified as ``auth`` (None: no auth, stdio), per the
    table of the module docstring.

    Args:
        auth: the front door's verified caller (``scope["ynm.auth"]``), or None.
        server_actor: the server's own actor (config ``actor``).
        people: resolves linked logins; None (no store keeps people): the derived id.
    """
    if auth is None:
        return Caller(actor=server_actor)
    if auth.static:
        return Caller(actor=STATIC_ACTOR, namespace=COMMON)
    if auth.subject and auth.issuer:
        person = (people.person_for(auth.issuer, auth.subject) if people is not None
                  else person_id(auth.issuer, auth.subject))
        return Caller(actor=f"user:{person}", client=auth.client_id or None, person=person,
                      namespace=f"user/{person}", may_use_people=True,
                      login=(auth.issuer, auth.subject))
    if auth.client:
        return Caller(actor=f"client:{auth.client}", namespace=COMMON)
    return Caller(actor=server_actor, namespace=COMMON)
