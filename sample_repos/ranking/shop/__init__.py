"""A small shop: carts, sessions, prices and checkout."""
