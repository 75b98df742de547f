"""The customer's visit: who they are and what is in their cart."""

from shop.money import format_amount


class Session:
    """One customer's visit to the shop."""

    def __init__(self, customer):
        self.customer = customer
        self.items = []

    def summary(self):
        return format_amount(sum(item.price for item in self.items))
