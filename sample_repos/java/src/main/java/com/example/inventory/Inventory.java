package com.example.inventory;

import java.util.HashMap;
import java.util.Map;

import com.example.inventory.config.ConfigParser;

/**
 * An in-memory collection of items keyed by name.
 */
public class Inventory implements Valued {
    private final Map<String, Item> items = new HashMap<>();
    private final int maxItems;

    /**
     * Summary statistics for an inventory snapshot.
     */
    public static class Stats {
        public final int count;
        public final double value;

        Stats(int count, double value) {
            this.count = count;
            this.value = value;
        }
    }

    /** Create an empty inventory holding at most maxItems entries. */
    public Inventory(int maxItems) {
        this.maxItems = maxItems;
    }

    /** Add an item, replacing any existing item with the same name. */
    public void addItem(Item item) {
        if (items.size() >= maxItems) {
            throw new IllegalStateException("inventory is full");
        }
        items.put(item.name(), item);
    }

    /** Remove and return the item with the given name. */
    public Item removeItem(String name) {
        return items.remove(name);
    }

    /** Return the summed value of every item. */
    public double totalValue() {
        return items.values().stream().mapToDouble(Item::value).sum();
    }

    /** Return a Stats snapshot for this inventory. */
    public Stats stats() {
        return new Stats(items.size(), totalValue());
    }

    /** Return the retry delay for an attempt using capped exponential growth. */
    public static double computeBackoff(int attempt) {
        double delay = 0.5 * Math.pow(2, attempt);
        return ConfigParser.clamp(delay, 0.0, 30.0);
    }

    /** Build an inventory from config and print its total value. */
    public static void main(String[] args) {
        Map<String, String> settings = ConfigParser.parseConfig("inventory.properties");
        Inventory inventory = new Inventory(Integer.parseInt(settings.get("max_items")));
        inventory.addItem(new Item("widget", 2.5, 4, Item.Category.HARDWARE));
        inventory.addItem(new Item("license", 10.0, 1, Item.Category.SOFTWARE));
        inventory.removeItem("widget");
        System.out.println(inventory.totalValue());
        System.out.println(computeBackoff(3));
    }
}
