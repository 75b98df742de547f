"""Paying for a cart: totals, taxes and the receipt."""

from shop.money import format_amount
from shop.pricing import apply_discount


def pay(session, rate):
    """Pay for the session's cart: the total after the discount, as a receipt line."""
    total = sum(item.price for item in session.items)
    return format_amount(apply_discount(total, rate))


def checkout_total(session):
    """The checkout total of a session's cart, with taxes."""
    return sum(item.price for item in session.items) * 1.2


def await_payment(session):
    """Wait for the payment of a checkout."""
    return session
