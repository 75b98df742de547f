/**
 * Out-of-line definitions for the inventory service.
 */
#include "inventory.hpp"

#include <cmath>
#include <iostream>

#include "config.hpp"

namespace inventory {

bool Inventory::add_item(const Item& item) {
    if (items_.size() >= max_items_) {
        return false;
    }
    items_[item.name] = item;
    return true;
}

bool Inventory::remove_item(const std::string& name) {
    return items_.erase(name) > 0;
}

double Inventory::total_value() const {
    double total = 0.0;
    for (const auto& entry : items_) {
        total += entry.second.value();
    }
    return total;
}

double compute_backoff(int attempt) {
    double delay = 0.5 * std::pow(2.0, attempt);
    return config::clamp(delay, 0.0, 30.0);
}

}  // namespace inventory

/// Build an inventory from config and print its total value.
int main() {
    using namespace inventory;
    config::Settings settings = config::parse_config("inventory.conf");
    Inventory inv(settings.max_items);
    inv.add_item(Item{"widget", 2.5, 4});
    inv.add_item(Item{"gadget", 10.0, 1});
    inv.remove_item("widget");
    std::cout << inv.total_value() << " " << compute_backoff(3) << std::endl;
    return 0;
}
