"""The virtual table's mechanics: what its motors move and what its sensors see, in memory.

Every mechanism is a position moved by its motor (1 ms of travel per ms at full speed, scaled
by the speed); the sensors are functions of the positions, and the edge counters count what the
mechanisms pass, as a board's interrupt handlers would:

    disc        an index edge every DISC_TURN_MS of turning; turning without the head mixes
                the sets in the disc (a set is drawn anew from the generator when next picked);
                a whole turn without the head, with the trap closed, is a shuffle: the
                selected set's partial walls go back in first (an instant alone, between the
                disc and the head starting or stopping one after the other, is not)
    head        a cycle every TILE_CYCLE_MS: a hall edge each cycle, and a tile picked up if
                the disc feeds it (tile edge; the reader names it for READ_MS); the tile lands
                in the wall channel TRANSIT_MS later (wall edge)
    chain       a loop every CHAIN_LOOP_MS; the home sensor is on for the first CHAIN_HOME_MS
                and ticks each time the chain comes home (carrying the staged wall to a plate)
    lifts       plates travel LIFT_TRAVEL_MS (centre lift CENTRE_TRAVEL_MS) between their
                limit switches; driven into an end stop a motor stalls
    dice        the dice sensor ticks every DICE_TICK_MS while they tumble; they are thrown
                (drawn) when the motor stops after tumbling long enough
    heat        the temperature creeps up while motors run, cools at rest, and follows an
                injected heat source

Deterministic: time moves only by ``advance(ms)``; the tile order and the dice come from a
seeded xorshift generator. The methods under "the physical world" break or repair things at
the hardware level; the firmware must find out from what the sensors and currents show. The
E-stop breaks the enable line here as on the real board, and the line gates every motor, the
dice motor's MOSFET included. A shorted driver is the exception: its output stage conducts
whatever it is told, enable line and E-stop or not, so its motor runs (FORWARD, full speed) and
draws its current until it is repaired. A broken sensor (the heat-sink NTC open or shorted, a
current-sense amplifier stuck at its rail) is a state of the sensor here; each port says what
the chip then reads (the virtual HAL: NO_READING; the chip's wiring: the ADC's counts).
"""

from firmware.compat import const
from firmware.config import faces
from firmware.hal import (
    EDGE_SENSORS,
    FORWARD,
    SENSE_CHAIN_HOME,
    SENSE_DICE,
    SENSE_DISC_INDEX,
    SENSE_HEAD_HOME,
    SENSE_TILE,
    SENSE_WALL,
    SPEED_FULL,
    TILE_NONE,
)
from protocol.loopback import XorShift32
from protocol.wirecodes import MOTOR_COUNT

#: nominal running current of each motor (mA); a blocked motor draws more
NOMINAL_MA = (850, 420, 640, 1150, 1150, 1150, 1150, 900, 380)
STALL = const(260)  # load, percent of nominal: a motor that cannot turn at all
STRAIN = const(140)  # load of a mechanism pushing against an obstruction

DISC_TURN_MS = const(600)
TILE_CYCLE_MS = const(140)
HEAD_HOME_MS = const(40)
CHAIN_LOOP_MS = const(600)
CHAIN_HOME_MS = const(60)
LIFT_TRAVEL_MS = const(1000)
CENTRE_TRAVEL_MS = const(300)
DICE_TICK_MS = const(100)
DICE_THROW_MS = const(500)
TRANSIT_MS = const(50)
READ_MS = const(100)
AMBIENT_DC = const(240)
RUN_RISE_DC = const(200)
HEAT_TAU_MS = const(600000)
COOL_TAU_MS = const(120000)
_STEP_MS = const(10)  # advance() moves in steps of at most this
#: the heat-sink NTC's wiring (Mechanics.ntc_wire)
NTC_WIRED = const(0)
NTC_OPEN = const(1)  # the NTC or a wire of it broken: the pull-up alone
NTC_SHORTED = const(2)  # its two wires touching: the divider's output at ground
UNIT = const(1000)  # position units per ms of travel at full speed

_DISC = const(0)
_HEAD = const(1)
_CHAIN = const(2)
_LIFT = const(3)  # motors 3..7: plates E S W N, centre lift
_DICE = const(8)


class Mechanics:
    """The table's mechanisms and inputs; ``advance(ms)`` moves time."""

    def __init__(self, tiles: int, seed: int, dice: bool) -> None:
        self.tiles = tiles
        self.rng = XorShift32(seed)
        self.fitted_dice = dice
        self.now = 0
        # motors
        self.enabled = False
        self.direction = [0] * MOTOR_COUNT
        self.speed = [0] * MOTOR_COUNT
        #: load (percent of nominal) of a mechanism that cannot move; 0 = free
        self.blocked = [0] * MOTOR_COUNT
        self._at_stop = [False] * MOTOR_COUNT
        self._run = [False] * MOTOR_COUNT  # turning during the current step
        self._pace = [0] * MOTOR_COUNT  # the speed it turns at during the current step
        #: a driver whose output stage conducts whatever it is told (a shorted switch)
        self.shorted = [False] * MOTOR_COUNT
        # mechanisms, in UNIT units
        self._disc = 0
        self._alone = 0  # how far the disc has turned without the head since it last did not
        self._head = 0
        self._chain = 0
        self.lift = [0, 0, 0, 0, CENTRE_TRAVEL_MS * UNIT]  # plates down, centre lift up
        self._dice_pos = 0
        self.edge = [0] * EDGE_SENSORS
        # the tiles
        self.order = [faces(tiles), faces(tiles)]
        self._mixed = [True, True]
        self.taken = [0, 0]
        #: the physical truth: each set's tiles in the order they were laid in walls
        self.laid = [bytearray(), bytearray()]
        self.selected = 0
        self._staged = 0  # tiles laid since the last push
        self.bench = -1  # set whose walls were pushed onto the plates
        self.top = -1  # set whose walls were raised onto the table
        self._code = TILE_NONE
        self._code_until = 0
        self._landings: list[int] = []
        self.belt_full = False
        # injected faults
        self.feed_jammed = False
        self.reader_dead = False
        self.dice_dead = False
        self._drop = 0
        self._extra = 0
        self._misread = 0
        self.heat_dc_per_s = 0
        #: the heat-sink NTC's wiring (NTC_WIRED, NTC_OPEN, NTC_SHORTED)
        self.ntc_wire = NTC_WIRED
        #: a motor's current-sense amplifier stuck at its supply rail
        self.amp_stuck = [False] * MOTOR_COUNT
        # inputs
        self.estop_pressed = False
        self.cover_open = False
        self.buttons: list[int] = []
        self._temp = AMBIENT_DC * 1000  # 1/1000 of a tenth of a degree
        self._dice = bytearray(3)
        self._tumbled = 0

    # --- motors ----------------------------------------------------------------------------------

    def set_motor(self, motor: int, direction: int, speed: int) -> None:
        was = self.speed[motor]
        self.direction[motor] = direction
        self.speed[motor] = speed if speed > 0 else 0
        if was and not speed and motor == _DICE:
            self._throw()

    @property
    def powered(self) -> bool:
        """Some motor turns (enable up, E-stop released, a speed set; or a shorted driver)."""
        for m in range(MOTOR_COUNT):  # noqa: SIM110 (a generator would allocate in MicroPython)
            if self.running(m):
                return True
        return False

    @property
    def driven(self) -> bool:
        """The firmware drives some motor (enable up and a speed set), E-stop or not."""
        return self.enabled and max(self.speed) > 0

    def running(self, motor: int) -> bool:
        """The motor turns: the firmware runs it through the enable line and the E-stop, or its
        shorted driver runs it whatever they say."""
        if self.shorted[motor]:
            return True
        return self.enabled and not self.estop_pressed and self.speed[motor] > 0

    def load_ma(self, motor: int) -> int:
        """The motor's current: nominal, or its load when blocked or against an end stop."""
        if not self.running(motor):
            return 0
        load = self.blocked[motor] or (STALL if self._at_stop[motor] else 100)
        ripple = (self.now // 37) % 7 - 3
        return NOMINAL_MA[motor] * load * (100 + ripple) // 10000

    # --- the physical world ----------------------------------------------------------------------

    def press_estop(self) -> None:
        self.estop_pressed = True

    def release_estop(self) -> None:
        self.estop_pressed = False

    def open_cover(self) -> None:
        self.cover_open = True

    def close_cover(self) -> None:
        self.cover_open = False

    def press_button(self, button: int, seat: int) -> None:
        self.buttons.append(button << 4 | seat << 1 | 1)
        self.buttons.append(button << 4 | seat << 1)

    def block(self, motor: int, load: int = STALL) -> None:
        """The motor's mechanism cannot move; it draws ``load`` percent of its nominal current
        (STALL: over the limit; STRAIN: under it, only the sensors can tell)."""
        self.blocked[motor] = load

    def short_driver(self, motor: int) -> None:
        """The motor's driver shorts: its motor runs and draws current whatever the firmware,
        the enable line or the E-stop say."""
        self.shorted[motor] = True

    def break_ntc(self, wire: int = NTC_OPEN) -> None:
        """The heat-sink NTC's wiring breaks: NTC_OPEN or NTC_SHORTED."""
        self.ntc_wire = wire

    def stick_amp(self, motor: int) -> None:
        """The motor's current-sense amplifier sticks at its supply rail."""
        self.amp_stuck[motor] = True

    def jam_feed(self) -> None:
        """A tile sticks between the disc and the head: no tile reaches the head."""
        self.feed_jammed = True

    def kill_reader(self) -> None:
        self.reader_dead = True

    def kill_dice_sensor(self) -> None:
        self.dice_dead = True

    def drop_tile(self) -> None:
        """The next tile falls off the belt before the wall channel."""
        self._drop += 1

    def extra_tile(self) -> None:
        """A tile of nowhere lands in the wall channel with the next one."""
        self._extra += 1

    def misread_tile(self) -> None:
        """The reader names the next tile as another face."""
        self._misread += 1

    def heat(self, dc_per_s: int) -> None:
        """A heat source (a failed fan...) warms the board by dc_per_s tenths of a degree/s."""
        self.heat_dc_per_s = dc_per_s

    def heat_sink_dc(self) -> int:
        """The heat sink's true temperature (0.1 degC), whatever its sensor reads."""
        return self._temp // 1000

    def set_temperature(self, dc: int) -> None:
        self._temp = dc * 1000

    def repair(self) -> None:
        """A technician frees every mechanism, homes the head and the chain, clears the belt,
        stops the heat; the reader and dice sensor work again; shorted drivers, the NTC and
        stuck amplifiers are replaced."""
        for m in range(MOTOR_COUNT):
            self.blocked[m] = 0
            self.shorted[m] = False
            self.amp_stuck[m] = False
        self.ntc_wire = NTC_WIRED
        self.feed_jammed = self.reader_dead = self.dice_dead = self.belt_full = False
        self._drop = self._extra = self._misread = 0
        self.heat_dc_per_s = 0
        self._head = 0  # at home
        self._chain = 0

    # --- time ------------------------------------------------------------------------------------

    def advance(self, ms: int) -> None:
        """Time passes: the mechanisms move, the sensors follow."""
        while ms > 0:
            dt = ms if ms < _STEP_MS else _STEP_MS
            self._step(dt)
            ms -= dt

    def _step(self, dt: int) -> None:
        self.now += dt
        now = self.now
        landings = self._landings
        while landings and landings[0] <= now:
            landings.pop(0)
            self.edge[SENSE_WALL] += 1
        run = self._run
        speed = self._pace
        on = False
        for m in range(MOTOR_COUNT):
            turning = self.running(m)
            run[m] = turning
            speed[m] = SPEED_FULL if self.shorted[m] else self.speed[m] if turning else 0
            on = on or turning
        if not on:
            self._alone = 0
            self._warm(dt, False)
            return
        blocked = self.blocked
        if run[_DISC] and not blocked[_DISC]:
            self._turn_disc(speed[_DISC] * dt)
        else:
            self._alone = 0
        if run[_HEAD]:
            if blocked[_HEAD]:
                self.belt_full = self.belt_full or run[_DISC]
            else:
                self._move_head(speed[_HEAD] * dt)
        if run[_CHAIN] and not blocked[_CHAIN]:
            self._move_chain(speed[_CHAIN] * dt)
        for i in range(5):
            m = _LIFT + i
            self._at_stop[m] = False
            if run[m] and not blocked[m]:
                direction = FORWARD if self.shorted[m] else self.direction[m]
                self._move_lift(i, direction * speed[m] * dt)
        if run[_DICE] and not blocked[_DICE]:
            tick = DICE_TICK_MS * UNIT
            pos = self._dice_pos + speed[_DICE] * dt
            self._dice_pos = pos % tick
            self._tumbled += dt
            if not self.dice_dead:
                self.edge[SENSE_DICE] += pos // tick
        self._warm(dt, True)

    def _turn_disc(self, units: int) -> None:
        turn = DISC_TURN_MS * UNIT
        pos = self._disc + units
        self._disc = pos % turn  # positions stay within one period: small integers
        self.edge[SENSE_DISC_INDEX] += pos // turn
        if self._run[_HEAD]:
            self._alone = 0
            return
        # the disc turns alone: the tiles in it mix; a whole turn with the trap closed is a
        # shuffle, and the selected set's partial walls were swept back in first
        if self._alone < turn:
            self._alone += units
        s = self.selected
        trap_closed = self.lift[4] >= CENTRE_TRAVEL_MS * UNIT
        if trap_closed and self._alone >= turn and self.taken[s] and s != self.top:
            self.taken[s] = 0
            self.laid[s] = bytearray()
            self._staged = 0
            if self.bench == s:
                self.bench = -1
        self._mixed[0] = self._mixed[1] = True
        if self.top >= 0 and self.lift[4] <= 0:  # the trap is open: the played set drops in
            self.taken[self.top] = 0
            self.laid[self.top] = bytearray()
            self.top = -1

    def _move_head(self, units: int) -> None:
        cycle = TILE_CYCLE_MS * UNIT
        pos = self._head + units
        self._head = pos % cycle
        for _ in range(pos // cycle):
            self.edge[SENSE_HEAD_HOME] += 1
            s = self.selected
            if not self._run[_DISC] or self.feed_jammed or self.taken[s] >= self.tiles:
                continue
            if self._mixed[s] and not self.taken[s]:
                self._draw(s)
            code = self.order[s][self.taken[s]]
            self.taken[s] += 1
            self.laid[s].append(code)
            self._staged += 1
            self.edge[SENSE_TILE] += 1
            if self._misread:
                self._misread -= 1
                code = 0x01 if code != 0x01 else 0x02
            self._code = code
            self._code_until = self.now + READ_MS
            if self._drop:
                self._drop -= 1
            else:
                self._landings.append(self.now + TRANSIT_MS)
            if self._extra:
                self._extra -= 1
                self._landings.append(self.now + TRANSIT_MS)

    def _draw(self, s: int) -> None:
        """Fisher-Yates from the generator: the order the set will be picked up in."""
        order = self.order[s]
        for i in range(len(order) - 1, 0, -1):
            j = self.rng.below(i + 1)
            order[i], order[j] = order[j], order[i]
        self._mixed[s] = False

    def _move_chain(self, units: int) -> None:
        loop = CHAIN_LOOP_MS * UNIT
        pos = self._chain + units
        self._chain = pos % loop
        homes = pos // loop
        if homes:
            self.edge[SENSE_CHAIN_HOME] += homes
            if self._staged:  # the chain carried the staged wall onto its plate
                self._staged = 0
                self.bench = self.selected

    def _move_lift(self, i: int, units: int) -> None:
        travel = (CENTRE_TRAVEL_MS if i == 4 else LIFT_TRAVEL_MS) * UNIT
        pos = self.lift[i] + units
        if pos >= travel or pos <= 0:
            self._at_stop[_LIFT + i] = (pos > travel) or (pos < 0)
            pos = travel if pos >= travel else 0
        self.lift[i] = pos
        if i < 4 and self.bench >= 0 and all([self.lift[p] >= travel for p in range(4)]):
            self.top = self.bench
            self.bench = -1

    def _throw(self) -> None:
        if self._tumbled >= DICE_THROW_MS:
            for i in range(3):
                self._dice[i] = 1 + self.rng.below(6)
        self._tumbled = 0

    def _warm(self, dt: int, running: bool) -> None:
        target = (AMBIENT_DC + (RUN_RISE_DC if running else 0)) * 1000
        tau = HEAT_TAU_MS if running else COOL_TAU_MS
        self._temp += (target - self._temp) * dt // tau + self.heat_dc_per_s * dt
