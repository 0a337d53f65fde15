"""A validated request, answered by the table (controller.cycle.reports.ApiBackend).

Requests reach here already read and allowed for the connection's role
(controller/api/decoding.py). The commands are presses from the source ``api``, like the
panel's buttons; ``subscribe`` marks the connection before it takes the snapshot, so no event
falls between the snapshot and the stream.

CLEAR FAULT is the board's to decide (whether the fault's cause is gone), so ``clear_fault``
waits for the board's answer, at most :data:`CLEAR_ANSWER_WAIT` seconds, and answers with it:
``accepted: false`` with the cause in words while it is still there. The wait is on the
server's thread (the board's answer comes on the board link's own thread, which it does not
hold): one round trip on the serial line, a few milliseconds; the bound only matters when the
line fails at that very moment (docs/api.md, "CLEAR FAULT").
"""

from __future__ import annotations

from typing import Protocol

from controller.api.messages import (
    BaseRequest,
    BaseResponse,
    ClearFaultRequest,
    CommandResponse,
    DealRequest,
    DealtResponse,
    ErrorDetail,
    ErrorResponse,
    GetCycleRequest,
    LastDealtRequest,
    ShuffleRequest,
    StatusRequest,
    StatusResponse,
    StopRequest,
    SubscribeRequest,
    SubscriptionResponse,
    SubscriptionResult,
    ThrowRequest,
    UnsubscribeRequest,
)
from controller.cycle.reports import Action, ApiBackend

#: The most seconds a ``clear_fault`` waits for the board's answer: a few of the link's
#: retransmissions (100 ms each), well under the 2 s after which the link is declared down.
CLEAR_ANSWER_WAIT = 1.0

#: The requests that are a press of a button, and the button.
PRESSES: dict[type[BaseRequest], Action] = {
    ShuffleRequest: "shuffle",
    DealRequest: "deal",
    StopRequest: "stop",
    ClearFaultRequest: "clear_fault",
}


class Subscriber(Protocol):
    subscribed: bool


def answer(table: ApiBackend, request: BaseRequest, conn: Subscriber) -> BaseResponse:
    """The response to ``request`` (the table's exceptions pass through)."""
    rid = request.id
    press = PRESSES.get(type(request))
    if press is not None:
        wait = CLEAR_ANSWER_WAIT if press == "clear_fault" else 0.0
        return CommandResponse(id=rid, result=table.request(press, "api", wait=wait))
    if isinstance(request, StatusRequest):
        return StatusResponse(id=rid, result=table.status())
    if isinstance(request, ThrowRequest):
        return CommandResponse(id=rid, result=table.enter_dice(list(request.dice), "api"))
    if isinstance(request, LastDealtRequest):
        return DealtResponse(id=rid, result=table.last_dealt())
    if isinstance(request, GetCycleRequest):
        dealt = table.get_cycle(request.cycle)
        if dealt is None:
            return ErrorResponse(
                id=rid,
                error=ErrorDetail(
                    code="not_found",
                    message=f"cycle: no cycle {request.cycle!r} is known to this table",
                ),
            )
        return DealtResponse(id=rid, result=dealt)
    if isinstance(request, SubscribeRequest):
        conn.subscribed = True  # first: no event can fall between the two
        return SubscriptionResponse(
            id=rid, result=SubscriptionResult(subscribed=True, status=table.status())
        )
    if isinstance(request, UnsubscribeRequest):
        conn.subscribed = False
        return SubscriptionResponse(
            id=rid, result=SubscriptionResult(subscribed=False, status=None)
        )
    raise AssertionError(f"no handler for {request!r}")
