"""Inventory service: stores items and computes their total value."""

import json
from dataclasses import dataclass, field

from config import parse_config, clamp


@dataclass
class Item:
    """A single stock-keeping unit with a price and a quantity."""

    name: str
    price: float
    quantity: int = 1

    def value(self) -> float:
        """Return the total value of this item line."""
        return self.price * self.quantity


class Inventory:
    """An in-memory collection of items keyed by name."""

    class Stats:
        """Summary statistics for an inventory snapshot."""

        def __init__(self, count: int, value: float):
            self.count = count
            self.value = value

    def __init__(self, max_items: int = 100):
        """Create an empty inventory holding at most max_items entries."""
        self.items = {}
        self.max_items = max_items

    def add_item(self, item: Item) -> None:
        """Add an item, replacing any existing item with the same name."""
        if len(self.items) >= self.max_items:
            raise ValueError("inventory is full")
        self.items[item.name] = item

    def remove_item(self, name: str) -> Item:
        """Remove and return the item with the given name."""
        return self.items.pop(name)

    def total_value(self) -> float:
        """Return the summed value of every item."""
        return sum(item.value() for item in self.items.values())

    def stats(self) -> "Inventory.Stats":
        """Return a Stats snapshot for this inventory."""
        return Inventory.Stats(len(self.items), self.total_value())

    def to_json(self) -> str:
        """Serialize the inventory to a JSON string."""

        def encode(item: Item) -> dict:
            return {"name": item.name, "price": item.price, "qty": item.quantity}

        return json.dumps([encode(i) for i in self.items.values()], sort_keys=True)


def compute_backoff(attempt: int, base: float = 0.5, cap: float = 30.0) -> float:
    """Return the retry delay for an attempt using capped exponential growth."""
    delay = base * (2 ** attempt)
    return clamp(delay, 0.0, cap)


def main() -> None:
    """Build an inventory from config and print its total value."""
    settings = parse_config("inventory.ini")
    inventory = Inventory(max_items=settings["max_items"])
    inventory.add_item(Item("widget", 2.5, 4))
    inventory.add_item(Item("gadget", 10.0))
    inventory.remove_item("widget")
    print(inventory.total_value())
    print(compute_backoff(3))


if __name__ == "__main__":
    main()
