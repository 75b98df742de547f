"""Prices: discounts and rounding."""

from shop.money import format_amount


def apply_discount(price, rate):
    """The price less the rate."""
    return price * (1 - rate)


def round_price(price):
    """Round a price to cents: rounds the price, then rounds again, as prices round."""
    return round(round(price, 3), 2)


def lookup_price(prices, product):
    """Look up a product's price among the prices."""
    return prices.get(product)


def price_label(price):
    return format_amount(round_price(price))
