"""Header stamping for requests and replies, as the original does it for direct RPCs."""

from __future__ import annotations

from ._ids import new_id, now_rfc3339
from ._messages import Header, Identity

__all__ = ["reply_header", "request_header"]


def request_header(
    protocol: str,
    *,
    sender: Identity,
    recipient: str | None = None,
    conversation: str | None = None,
    parent: str | None = None,
) -> Header:
    """A fresh request header: one new id serves as `id`, `request` and (unless given) `conversation`."""
    message_id = new_id()
    return Header(
        protocol=protocol,
        id=message_id,
        request=message_id,
        conversation=conversation or message_id,
        sequence=0,
        time=now_rfc3339(),
        sender=sender,
        parent=parent,
        recipient=Identity(name=recipient) if recipient else None,
    )


def reply_header(protocol: str, request: Header | None, *, sender: Identity, sequence: int = 0) -> Header:
    """A reply (or event) header: a new id, `request` and `conversation` copied from the request.

    With no usable request (a message that could not be decoded) the reply correlates to itself.
    """
    message_id = new_id()
    return Header(
        protocol=protocol,
        id=message_id,
        request=request.request if request is not None else message_id,
        conversation=request.conversation if request is not None else message_id,
        sequence=sequence,
        time=now_rfc3339(),
        sender=sender,
        recipient=Identity(name=request.sender.name) if request is not None and request.sender.name else None,
    )
