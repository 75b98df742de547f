"""The cart of the first shop, kept for old sessions: a cart, its cart items, cart totals."""


class Cart:
    """The old cart: a cart of cart items."""

    def __init__(self):
        self.cart_items = []

    def add_to_cart(self, item):
        self.cart_items.append(item)

    def cart_total(self):
        return sum(item.price for item in self.cart_items)
