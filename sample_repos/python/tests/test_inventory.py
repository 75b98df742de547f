"""Tests for the inventory sample project."""

import pytest

from inventory import Inventory, Item, compute_backoff
from config import clamp


def test_add_and_total_value():
    inventory = Inventory()
    inventory.add_item(Item("widget", 2.5, 4))
    inventory.add_item(Item("gadget", 10.0))
    assert inventory.total_value() == 20.0


def test_remove_item():
    inventory = Inventory()
    inventory.add_item(Item("widget", 2.5))
    removed = inventory.remove_item("widget")
    assert removed.name == "widget"
    assert inventory.total_value() == 0


def test_full_inventory_raises():
    inventory = Inventory(max_items=1)
    inventory.add_item(Item("widget", 1.0))
    with pytest.raises(ValueError):
        inventory.add_item(Item("gadget", 1.0))


def test_compute_backoff_is_capped():
    assert compute_backoff(0) == 0.5
    assert compute_backoff(20) == 30.0


def test_clamp():
    assert clamp(5, 0, 3) == 3
    assert clamp(-1, 0, 3) == 0
