package com.example.inventory;

/**
 * Anything that can report a monetary value.
 */
interface Valued {
    /** Return the total value in the base currency. */
    double totalValue();
}

/**
 * A single stock-keeping unit with a price and a quantity.
 */
public record Item(String name, double price, int quantity, Category category) {

    /** Category an item belongs to. */
    public enum Category {
        HARDWARE,
        SOFTWARE,
        SERVICE;

        /** Return a human-readable label for this category. */
        public String label() {
            return name().toLowerCase();
        }
    }

    /** Return the total value of this item line. */
    public double value() {
        return price * quantity;
    }

    /** Return a copy of this item with a different quantity. */
    public Item withQuantity(int newQuantity) {
        return new Item(name, price, newQuantity, category);
    }
}
