"""The panel driver through the real pyusb core over the emulated USB backend."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator

import pytest
import usb.control
import usb.core
import usb.util

from drivers.panel import (
    Button,
    ButtonPress,
    LedState,
    Panel,
    PanelAccessDenied,
    PanelBusy,
    PanelEvent,
    PanelNotAPanel,
    PanelNotFound,
    PanelReplugged,
    PanelUnplugged,
)
from drivers.usbemu import REPORT_DESCRIPTOR, EmulatedPanel, EmulatedUsbBackend, emulated_panel

TIMEOUT = 20.0


class ManualClock:
    """The driver's clock, moved by the test only: debouncing without real time."""

    def __init__(self) -> None:
        self._now = 1000.0
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._now += seconds


class Harness:
    def __init__(self, backend: EmulatedUsbBackend, device: EmulatedPanel, panel: Panel) -> None:
        self.backend = backend
        self.device = device
        self.panel = panel
        self.events: queue.Queue[PanelEvent] = queue.Queue()

    def next(self) -> PanelEvent:
        return self.events.get(timeout=TIMEOUT)

    def presses_until(self, sentinel: Button) -> list[Button]:
        """Click ``sentinel`` and return every press that came before it.

        The reader handles reports in order, so once the sentinel's press has
        arrived, every earlier report has been filtered: nothing more can come.
        (A sentinel is itself debounced: do not reuse one without moving the clock.)
        """
        self.device.click(sentinel)
        seen: list[Button] = []
        while True:
            event = self.next()
            assert isinstance(event, ButtonPress), event
            if event.button is sentinel:
                return seen
            seen.append(event.button)


def make(clock: ManualClock | None = None, **device_kwargs: object) -> Harness:
    backend, device = emulated_panel(**device_kwargs)
    harness = Harness(backend, device, None)  # type: ignore[arg-type]
    harness.panel = Panel(
        harness.events.put,
        backend=backend,
        read_timeout_ms=100,
        backoff_initial_s=0.01,
        backoff_max_s=0.05,
        clock=clock or ManualClock(),
    )
    return harness


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def h(clock: ManualClock) -> Iterator[Harness]:
    harness = make(clock)
    harness.panel.open()
    yield harness
    harness.panel.close()


def test_real_pyusb_core_sees_the_emulated_descriptors() -> None:
    backend, _ = emulated_panel(serial="T-42")
    dev = usb.core.find(backend=backend, idVendor=0x1209, idProduct=0x4D4A)
    assert dev is not None
    assert (dev.serial_number, dev.product, dev.manufacturer) == (
        "T-42",
        "mjtable dealer panel",
        "mjtable",
    )
    intf = dev[0][(0, 0)]
    assert intf.bInterfaceClass == 3
    eps = {ep.bEndpointAddress: usb.util.endpoint_type(ep.bmAttributes) for ep in intf}
    assert eps == {0x81: usb.util.ENDPOINT_TYPE_INTR, 0x01: usb.util.ENDPOINT_TYPE_INTR}
    hid = bytes(intf.extra_descriptors)
    assert hid[1] == 0x21 and int.from_bytes(hid[7:9], "little") == len(REPORT_DESCRIPTOR)
    # The raw descriptors agree with the parsed ones.
    raw_dev = bytes(usb.control.get_descriptor(dev, 18, usb.util.DESC_TYPE_DEVICE, 0))
    assert int.from_bytes(raw_dev[8:10], "little") == 0x1209
    assert int.from_bytes(raw_dev[10:12], "little") == 0x4D4A
    cfg = dev[0]
    raw_cfg = bytes(usb.control.get_descriptor(dev, 255, usb.util.DESC_TYPE_CONFIG, 0))
    assert len(raw_cfg) == cfg.wTotalLength
    assert hid in raw_cfg
    dev.detach_kernel_driver(0)
    report = dev.ctrl_transfer(0x81, 0x06, 0x2200, 0, len(REPORT_DESCRIPTOR))
    assert bytes(report) == REPORT_DESCRIPTOR
    usb.util.dispose_resources(dev)


def test_a_click_is_one_press(h: Harness, clock: ManualClock) -> None:
    h.device.click(Button.SHUFFLE)
    event = h.next()
    assert event == ButtonPress(Button.SHUFFLE, clock())
    assert h.presses_until(Button.DEAL) == []
    assert h.device.kernel_detaches == 1  # the kernel HID driver was detached


def test_every_button_and_the_key(h: Harness, clock: ManualClock) -> None:
    for button in (Button.SHUFFLE, Button.DEAL, Button.STOP, Button.CLEAR_FAULT):
        clock.advance(1.0)
        h.device.click(button)
        assert h.next() == ButtonPress(button, clock())


def test_key_repeat_is_not_a_press(h: Harness) -> None:
    h.device.hold(Button.DEAL, repeats=12)
    h.device.release(Button.DEAL)
    assert h.presses_until(Button.STOP) == [Button.DEAL]
    assert h.panel.filter.stats.repeats == 12


def test_bounces_count_once(h: Harness, clock: ManualClock) -> None:
    h.device.bounce(Button.SHUFFLE, 4)  # chatter on the press: 9 reports, ends down
    h.device.bounce(Button.SHUFFLE, 3)  # chatter on the release: 7 reports, ends up
    assert h.presses_until(Button.STOP) == [Button.SHUFFLE]
    assert h.panel.filter.stats.bounces == 4 + 3


def test_press_after_the_window_counts_again(h: Harness, clock: ManualClock) -> None:
    h.device.click(Button.SHUFFLE)
    assert h.presses_until(Button.STOP) == [Button.SHUFFLE]
    clock.advance(0.01)  # shorter than the 30 ms window after the release
    h.device.click(Button.SHUFFLE)
    assert h.presses_until(Button.DEAL) == []
    clock.advance(0.05)
    h.device.click(Button.SHUFFLE)
    assert h.presses_until(Button.STOP) == [Button.SHUFFLE]


def test_two_buttons_together(h: Harness) -> None:
    h.device.press(Button.SHUFFLE)
    h.device.press(Button.DEAL)
    h.device.release(Button.SHUFFLE)
    h.device.release(Button.DEAL)
    assert h.presses_until(Button.STOP) == [Button.SHUFFLE, Button.DEAL]


def test_duplicates_and_bad_reports_are_ignored(h: Harness) -> None:
    h.device.press(Button.DEAL)
    h.device.repeat_last_report()
    h.device.send_raw(b"\x07\x01\x00\x00\x00\x00\x00\x00")  # wrong report id
    h.device.send_raw(b"\x01\x01")  # too short
    h.device.release(Button.DEAL)
    assert h.presses_until(Button.STOP) == [Button.DEAL]
    stats = h.panel.filter.stats
    assert (stats.duplicates, stats.bad) == (1, 2)


def test_leds_by_interrupt_out(h: Harness) -> None:
    assert h.panel.set_leds(ready=True, busy=False, fault=False)
    assert h.device.leds == LedState(ready=True)
    assert h.panel.set_leds(ready=False, busy=True, fault=True, blink_fault=True)
    assert h.device.leds == LedState(busy=True, fault=True, blink_fault=True)
    assert h.panel.leds == h.device.leds
    assert h.device.led_writes_by_control == 0


def test_leds_by_set_report_without_out_endpoint(clock: ManualClock) -> None:
    harness = make(clock, out_endpoint=False)
    with harness.panel as panel:
        panel.open()
        assert panel.set_leds(ready=False, busy=False, fault=True)
        assert harness.device.leds == LedState(fault=True)
        assert harness.device.led_writes_by_control == 2  # at open, then this one


def test_unplug_and_replug(h: Harness, clock: ManualClock) -> None:
    h.panel.set_leds(ready=True, busy=False, fault=False)
    h.device.unplug()
    event = h.next()
    assert isinstance(event, PanelUnplugged) and "unplugged" in event.reason
    assert not h.panel.set_leds(ready=False, busy=True, fault=False)  # kept for later
    h.device.plug()
    event = h.next()
    assert isinstance(event, PanelReplugged) and event.serial == "EMU-0001"
    assert event.attempts >= 1
    assert h.panel.connected
    # The LED state asked for while unplugged reached the replugged panel.
    assert h.device.wait_leds(LedState(busy=True), timeout=TIMEOUT)
    assert h.device.kernel_detaches == 2
    clock.advance(1.0)
    h.device.click(Button.SHUFFLE)
    assert h.next() == ButtonPress(Button.SHUFFLE, clock())


def test_not_found_says_what_to_check() -> None:
    backend = EmulatedUsbBackend()
    panel = Panel(lambda e: None, backend=backend)
    with pytest.raises(PanelNotFound) as err:
        panel.open()
    assert str(err.value) == (
        "no button panel with id 1209:4d4a on the USB bus: check the cable and the udev rule"
    )


def test_other_ids_and_serials_do_not_match(clock: ManualClock) -> None:
    backend = EmulatedUsbBackend()
    backend.add_panel(vendor_id=0x1234, product_id=0x4D4A)
    backend.add_panel(serial="A-1")
    wanted = backend.add_panel(serial="B-2")
    with pytest.raises(PanelNotFound, match="1209:4d4a serial C-3"):
        Panel(lambda e: None, backend=backend, serial="C-3").open()
    events: queue.Queue[PanelEvent] = queue.Queue()
    with Panel(
        events.put, backend=backend, serial="B-2", read_timeout_ms=100, clock=clock
    ) as panel:
        panel.open()
        backend.devices[1].click(Button.STOP)  # the other panel: not ours
        wanted.click(Button.DEAL)
        assert events.get(timeout=TIMEOUT) == ButtonPress(Button.DEAL, clock())
        assert wanted.claimed_by is not None and backend.devices[1].claimed_by is None


def test_wait_for_a_panel_plugged_later(clock: ManualClock) -> None:
    harness = make(clock)
    harness.device.unplug()
    with harness.panel as panel:
        panel.open(wait=True)
        event = harness.next()
        assert isinstance(event, PanelUnplugged) and "at start" in event.reason
        harness.device.plug()
        assert isinstance(harness.next(), PanelReplugged)
        harness.device.click(Button.SHUFFLE)
        assert isinstance(harness.next(), ButtonPress)


def test_access_denied_names_the_udev_rule() -> None:
    backend, _ = emulated_panel(access_denied=True)
    with pytest.raises(PanelAccessDenied, match="udev rule"):
        Panel(lambda e: None, backend=backend).open()


def test_busy_when_another_program_holds_it(h: Harness) -> None:
    other = Panel(lambda e: None, backend=h.backend)
    with pytest.raises(PanelBusy, match="in use by another program"):
        other.open()
    # The first one still works.
    h.device.click(Button.DEAL)
    assert isinstance(h.next(), ButtonPress)


def test_a_device_that_is_not_a_panel() -> None:
    backend, _ = emulated_panel(interface_class=0xFF)
    with pytest.raises(PanelNotAPanel, match="no HID interface"):
        Panel(lambda e: None, backend=backend).open()


def test_close_releases_and_gives_back_the_kernel_driver(clock: ManualClock) -> None:
    harness = make(clock)
    harness.panel.open()
    assert harness.device.claimed_by is not None and not harness.device.kernel_driver
    harness.panel.close()
    assert harness.device.claimed_by is None and harness.device.kernel_driver
    assert not harness.panel.connected


def test_a_failing_handler_does_not_stop_the_reader(clock: ManualClock) -> None:
    backend, device = emulated_panel()
    got: queue.Queue[PanelEvent] = queue.Queue()

    def handler(event: PanelEvent) -> None:
        if isinstance(event, ButtonPress) and event.button is Button.SHUFFLE:
            raise RuntimeError("handler bug")
        got.put(event)

    with Panel(handler, backend=backend, read_timeout_ms=100, clock=clock) as panel:
        panel.open()
        device.click(Button.SHUFFLE)
        device.click(Button.DEAL)
        assert got.get(timeout=TIMEOUT) == ButtonPress(Button.DEAL, clock())


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="16-bit"):
        Panel(lambda e: None, vendor_id=0x12345)
    with pytest.raises(ValueError, match="debounce_s"):
        Panel(lambda e: None, debounce_s=-1)
    with pytest.raises(ValueError, match="backoff"):
        Panel(lambda e: None, backoff_initial_s=10, backoff_max_s=1)


def test_close_from_the_event_handler(clock: ManualClock) -> None:
    backend, device = emulated_panel()
    done = threading.Event()
    holder: list[Panel] = []

    def handler(event: PanelEvent) -> None:
        if isinstance(event, ButtonPress):
            holder[0].close()
            done.set()

    panel = Panel(handler, backend=backend, read_timeout_ms=100, clock=clock)
    holder.append(panel)
    panel.open()
    device.click(Button.STOP)
    assert done.wait(TIMEOUT)
    assert not panel.connected and device.claimed_by is None
