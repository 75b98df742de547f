"""Reports of the day: sales and stock, written for the staff."""

from shop.money import format_amount


def pins_report(sessions):
    """The pins of the day: what sold, in amounts."""
    return [format_amount(s.total) for s in sessions]


def stock_report(products):
    return [format_amount(p.cost) for p in products]
