"""A validated request, answered by the table (controller.cycle.reports.ApiBackend).

Requests reach here already read and allowed for the connection's role
(controller/api/decoding.py). The commands are presses from the source ``api``, like the
panel's buttons; ``subscribe`` marks the connection before it takes the snapshot, so no event
falls between the snapshot and the stream.

CLEAR FAULT is the board's to decide (whether the fault's cause is gone), so ``clear_fault``
is answered with the board's answer: ``accepted: false`` with the cause in words while it is
still there. :func:`answer` then returns None and hands the response to ``later`` when the
board answers (on the board link's thread); the server answers the connection's next lines
only after it, and gives the :func:`unanswered` response if the board has not answered within
:data:`CLEAR_ANSWER_WAIT` seconds. Nothing waits on the server's thread: one round trip on the
serial line takes a few milliseconds, and the bound only matters when the line fails at that
very moment (docs/api.md, "CLEAR FAULT").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from controller.api.messages import (
    BaseRequest,
    BaseResponse,
    ClearFaultRequest,
    CommandResponse,
    DealRequest,
    DealtResponse,
    DiagRequest,
    DiagResponse,
    ErrorDetail,
    ErrorResponse,
    GetCycleRequest,
    LastDealtRequest,
    SetLeaderRequest,
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
from controller.cycle.faults import CLEAR_UNANSWERED
from controller.cycle.reports import Action, ApiBackend, CommandResult

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


def answer(
    table: ApiBackend,
    request: BaseRequest,
    conn: Subscriber,
    later: Callable[[BaseResponse], None],
) -> BaseResponse | None:
    """The response to ``request``, or None when it is the board's to give: it is then handed
    to ``later``, once, from another thread (the table's exceptions pass through)."""
    rid = request.id
    press = PRESSES.get(type(request))
    if press is not None:
        result: CommandResult | None
        if press != "clear_fault":
            result = table.request(press, "api")
        else:

            def answered(result: CommandResult) -> None:
                later(CommandResponse(id=rid, result=result))

            result = table.request(press, "api", answered=answered)
        return None if result is None else CommandResponse(id=rid, result=result)
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
    if isinstance(request, SetLeaderRequest):
        result = table.set_leader(request.seat, "api", request.game)
        return CommandResponse(id=rid, result=result)
    if isinstance(request, DiagRequest):
        return DiagResponse(id=rid, result=table.diagnose(request.motors, request.motor_ms, "api"))
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


def unanswered(table: ApiBackend, request: BaseRequest) -> BaseResponse:
    """The response to a ``clear_fault`` the board has not answered in CLEAR_ANSWER_WAIT
    seconds: sent; its answer follows as a ``button`` event."""
    status = table.status()
    return CommandResponse(
        id=request.id,
        result=CommandResult(
            action="clear_fault",
            accepted=True,
            message=CLEAR_UNANSWERED.format(seconds=CLEAR_ANSWER_WAIT),
            state=status.state,
            cycle=status.cycle,
        ),
    )
