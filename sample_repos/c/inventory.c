/**
 * Inventory service: stores items and computes their total value.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#define MAX_CAPACITY 64

/** A single stock-keeping unit with a price and a quantity. */
struct Item {
    char name[32];
    double price;
    int quantity;
};

/** An in-memory collection of items. */
struct Inventory {
    struct Item items[MAX_CAPACITY];
    size_t count;
    size_t max_items;
    /** Running statistics kept alongside the items. */
    struct Stats {
        size_t adds;
        size_t removes;
    } stats;
};

/** Initialise an empty inventory holding at most max_items entries. */
void inventory_init(struct Inventory *inv, size_t max_items)
{
    memset(inv, 0, sizeof(*inv));
    inv->max_items = max_items < MAX_CAPACITY ? max_items : MAX_CAPACITY;
}

/** Add an item; returns 0 on success or -1 when the inventory is full. */
int inventory_add_item(struct Inventory *inv, struct Item item)
{
    if (inv->count >= inv->max_items) {
        return -1;
    }
    inv->items[inv->count++] = item;
    inv->stats.adds++;
    return 0;
}

/** Remove the item with the given name; returns 0 if it was found. */
int inventory_remove_item(struct Inventory *inv, const char *name)
{
    for (size_t i = 0; i < inv->count; i++) {
        if (strcmp(inv->items[i].name, name) == 0) {
            inv->items[i] = inv->items[--inv->count];
            inv->stats.removes++;
            return 0;
        }
    }
    return -1;
}

/** Return the summed value of every item. */
double inventory_total_value(const struct Inventory *inv)
{
    double total = 0.0;
    for (size_t i = 0; i < inv->count; i++) {
        total += inv->items[i].price * inv->items[i].quantity;
    }
    return total;
}

/** Return the retry delay for an attempt using capped exponential growth. */
double compute_backoff(int attempt)
{
    double delay = 0.5 * pow(2.0, attempt);
    return clamp(delay, 0.0, 30.0);
}

int main(void)
{
    Config cfg;
    struct Inventory inv;
    struct Item widget = {"widget", 2.5, 4};

    parse_config("inventory.conf", &cfg);
    inventory_init(&inv, cfg.max_items);
    inventory_add_item(&inv, widget);
    inventory_remove_item(&inv, "widget");
    printf("%.2f %.2f\n", inventory_total_value(&inv), compute_backoff(3));
    return 0;
}
