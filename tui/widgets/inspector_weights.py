"""Weight and half-life controls for the recall inspector: a number you can type, step with -/+ or up/down."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.validation import Number
from textual.widgets import Button, Input, Label, Static

from memdeck.core.config import COMPONENTS, DEFAULT_HALF_LIFE_DAYS, Profile
from memdeck.core.records import STORED_TIERS

WEIGHT_STEP = 0.05
WEIGHT_MAX = 100.0  # the limit core/config.py accepts
HALF_LIFE_FACTOR = 1.25  # half-lives span days to years, so they step by a ratio
HALF_LIFE_MIN, HALF_LIFE_MAX = 0.1, 100_000.0


def _format(value: float, decimals: int) -> str:
    text = f"{value:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


class WeightStepper(Horizontal):
    """One named number with - and + buttons; up/down on its input step it too."""

    # A reusable control keeps the little CSS its own layout needs (one line: label, -, field, +);
    # where it sits and how it looks otherwise is up to app.tcss.
    DEFAULT_CSS = """
    WeightStepper {
        height: 1;
        width: 1fr;
    }
    WeightStepper > .stepper-label {
        width: 12;
        padding: 0 1;
    }
    WeightStepper > Button {
        min-width: 3;
        width: 3;
    }
    WeightStepper > Input {
        width: 1fr;
        margin: 0 1;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "step(1)", "Increase", show=False, id="inspector.weight_increase"),
        Binding("down", "step(-1)", "Decrease", show=False, id="inspector.weight_decrease"),
    ]

    @dataclass
    class Changed(Message):
        """A stepper's value changed (typed, stepped or clicked)."""

        stepper: WeightStepper
        value: float

        @property
        def key(self) -> str:
            return self.stepper.key

        @property
        def control(self) -> WeightStepper:
            return self.stepper

    def __init__(
        self,
        key: str,
        label: str,
        value: float,
        *,
        step: float = WEIGHT_STEP,
        minimum: float = 0.0,
        maximum: float = WEIGHT_MAX,
        ratio: float | None = None,
        decimals: int = 2,
        id: str | None = None,
        tooltip: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.key = key
        self.label = label
        self.value = float(value)
        self.step = step
        self.minimum = minimum
        self.maximum = maximum
        self.ratio = ratio
        self.decimals = decimals
        self._tooltip = tooltip

    def compose(self) -> ComposeResult:
        prefix = self.id or self.key
        yield Label(self.label, classes="stepper-label")
        minus = Button("−", id=f"{prefix}-minus", classes="stepper-minus", compact=True)
        plus = Button("+", id=f"{prefix}-plus", classes="stepper-plus", compact=True)
        # The input is the keyboard stop; the buttons are for the mouse, so Tab does not visit 27 widgets.
        minus.can_focus = plus.can_focus = False
        yield minus
        field = Input(
            _format(self.value, self.decimals),
            type="number",
            id=f"{prefix}-input",
            classes="stepper-input",
            validators=[Number(minimum=self.minimum, maximum=self.maximum)],
            valid_empty=False,
            compact=True,
        )
        if self._tooltip:
            field.tooltip = self._tooltip
        yield field
        yield plus

    @property
    def input(self) -> Input:
        return self.query_one(Input)

    def set_value(self, value: float, *, announce: bool = False) -> None:
        """Show a new value; post :class:`Changed` only when ``announce`` (a load or reset does not)."""
        value = min(max(float(value), self.minimum), self.maximum)
        self.value = value
        if self.is_mounted:
            with self.input.prevent(Input.Changed):
                self.input.value = _format(value, self.decimals)
        if announce:
            self.post_message(self.Changed(self, value))

    def action_step(self, direction: int) -> None:
        if self.ratio:
            value = self.value * (self.ratio if direction > 0 else 1 / self.ratio)
            value = round(value, 1) if value >= 1 else round(value, 2)
        else:
            value = round(self.value + direction * self.step, 4)
            if math.isclose(value, 0.0, abs_tol=1e-9):
                value = 0.0
        self.set_value(value, announce=True)

    @on(Button.Pressed, ".stepper-minus")
    def _minus(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_step(-1)

    @on(Button.Pressed, ".stepper-plus")
    def _plus(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_step(1)

    @on(Input.Changed, ".stepper-input")
    def _typed(self, event: Input.Changed) -> None:
        event.stop()
        if event.validation_result is not None and not event.validation_result.is_valid:
            return
        try:
            value = float(event.value)
        except ValueError:
            return
        if not math.isfinite(value) or value == self.value:
            return
        self.value = value
        self.post_message(self.Changed(self, value))

    @on(Input.Submitted, ".stepper-input")
    def _submitted(self, event: Input.Submitted) -> None:
        # Enter in a weight field should not also run the query.
        event.stop()


class WeightsPanel(Vertical):
    """The six score weights and the three tier half-lives of a profile."""

    @dataclass
    class Changed(Message):
        """The person changed a weight or a half-life; ``profile`` is the new profile."""

        panel: WeightsPanel
        profile: Profile
        key: str

        @property
        def control(self) -> WeightsPanel:
            return self.panel

    def __init__(self, profile: Profile, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._profile = _copy(profile)

    @property
    def profile(self) -> Profile:
        return _copy(self._profile)

    def compose(self) -> ComposeResult:
        yield Static("Weights", classes="weights-heading")
        for name in COMPONENTS:
            yield WeightStepper(
                name,
                name,
                self._profile.weights.get(name, 0.0),
                id=f"inspector-weight-{name}",
                tooltip=f"Weight of the {name} component (0-{WEIGHT_MAX:g}); up/down step by {WEIGHT_STEP}",
            )
        yield Static("Half-lives (days)", classes="weights-heading")
        for tier in STORED_TIERS:
            yield WeightStepper(
                f"half_life.{tier}",
                tier,
                self._profile.half_life_days.get(tier, DEFAULT_HALF_LIFE_DAYS[tier]),
                ratio=HALF_LIFE_FACTOR,
                minimum=HALF_LIFE_MIN,
                maximum=HALF_LIFE_MAX,
                decimals=1,
                id=f"inspector-half-life-{tier}",
                tooltip=f"Recency half-life of {tier} memories in days; up/down scale by {HALF_LIFE_FACTOR}",
            )

    def set_profile(self, profile: Profile) -> None:
        """Show another profile (loaded or reset) without announcing each field."""
        self._profile = _copy(profile)
        for stepper in self.query(WeightStepper):
            stepper.set_value(self._value_of(stepper.key))

    def _value_of(self, key: str) -> float:
        if key.startswith("half_life."):
            return self._profile.half_life_days[key.split(".", 1)[1]]
        return self._profile.weights.get(key, 0.0)

    @on(WeightStepper.Changed)
    def _changed(self, event: WeightStepper.Changed) -> None:
        event.stop()
        if event.key.startswith("half_life."):
            self._profile.half_life_days[event.key.split(".", 1)[1]] = event.value
        else:
            self._profile.weights[event.key] = event.value
        self.post_message(self.Changed(self, self.profile, event.key))


def _copy(profile: Profile) -> Profile:
    return Profile(profile.name, dict(profile.weights), dict(profile.half_life_days))
