"""Amounts of money as text."""


def format_amount(amount):
    """Two decimals and a currency sign."""
    return f"${amount:.2f}"
