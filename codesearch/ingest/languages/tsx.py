"""TSX: TypeScript with JSX; same definitions as TypeScript."""

from dataclasses import replace

from .typescript import SPEC as TS

SPEC = replace(TS, name="tsx", grammar="tsx", extensions=(".tsx",))
