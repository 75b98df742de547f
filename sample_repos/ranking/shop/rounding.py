"""Rounding prices to cents."""


def round_prices(prices):
    """Round prices to cents, rounding each price half up."""
    return [round(price, 2) for price in prices]
