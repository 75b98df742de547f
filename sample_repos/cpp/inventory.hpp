/**
 * Inventory service: stores items and computes their total value.
 */
#pragma once

#include <cstddef>
#include <map>
#include <string>

namespace inventory {

/// A single stock-keeping unit with a price and a quantity.
struct Item {
    std::string name;
    double price;
    int quantity;

    /// Return the total value of this item line.
    double value() const { return price * quantity; }
};

/// An in-memory collection of items keyed by name.
class Inventory {
public:
    /// Summary statistics for an inventory snapshot.
    class Stats {
    public:
        Stats(std::size_t count, double value) : count_(count), value_(value) {}
        std::size_t count() const { return count_; }
        double value() const { return value_; }

    private:
        std::size_t count_;
        double value_;
    };

    /// Create an empty inventory holding at most max_items entries.
    explicit Inventory(std::size_t max_items) : max_items_(max_items) {}

    /// Return the number of stored items.
    std::size_t size() const { return items_.size(); }

    /// Add an item, replacing any existing item with the same name.
    bool add_item(const Item& item);

    /// Remove the item with the given name; returns true if it existed.
    bool remove_item(const std::string& name);

    /// Return the summed value of every item.
    double total_value() const;

    /// Return a Stats snapshot for this inventory.
    Stats stats() const { return Stats(size(), total_value()); }

private:
    std::map<std::string, Item> items_;
    std::size_t max_items_;
};

/// Return the retry delay for an attempt using capped exponential growth.
double compute_backoff(int attempt);

}  // namespace inventory
