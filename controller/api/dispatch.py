"""A validated request, answered by the table (controller.cycle.reports.ApiBackend).

Requests reach here already read and allowed for the connection's role
(controller/api/decoding.py). The commands are presses from the source ``api``, like the
panel's buttons; ``subscribe`` marks the connection before it takes the snapshot, so no event
falls between the snapshot and the stream.
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
    DiagRequest,
    DiagResponse,
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
        return CommandResponse(id=rid, result=table.request(press, "api"))
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
