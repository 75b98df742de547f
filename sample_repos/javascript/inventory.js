/**
 * Inventory service: stores items and computes their total value.
 * @module inventory
 */

import { EventEmitter } from "node:events";
import { parseConfig, clamp } from "./config.js";

/**
 * A single stock-keeping unit with a price and a quantity.
 */
export class Item {
  /** Create an item line from a name, unit price and quantity. */
  constructor(name, price, quantity = 1) {
    this.name = name;
    this.price = price;
    this.quantity = quantity;
  }

  /** Return the total value of this item line. */
  value() {
    return this.price * this.quantity;
  }
}

/**
 * An in-memory collection of items keyed by name.
 */
export class Inventory extends EventEmitter {
  /** Create an empty inventory holding at most maxItems entries. */
  constructor(maxItems = 100) {
    super();
    this.items = new Map();
    this.maxItems = maxItems;
  }

  /** Add an item, replacing any existing item with the same name. */
  addItem(item) {
    if (this.items.size >= this.maxItems) {
      throw new Error("inventory is full");
    }
    this.items.set(item.name, item);
    this.emit("added", item);
  }

  /** Remove and return the item with the given name. */
  removeItem(name) {
    const item = this.items.get(name);
    this.items.delete(name);
    return item;
  }

  /** Return the summed value of every item. */
  totalValue() {
    let total = 0;
    for (const item of this.items.values()) {
      total += item.value();
    }
    return total;
  }

  /** Serialize the inventory to a JSON string. */
  toJSON() {
    function encode(item) {
      return { name: item.name, price: item.price, qty: item.quantity };
    }
    return JSON.stringify([...this.items.values()].map(encode));
  }
}

/**
 * Return the retry delay for an attempt using capped exponential growth.
 * @param {number} attempt
 * @returns {number}
 */
export function computeBackoff(attempt, base = 0.5, cap = 30) {
  const delay = base * 2 ** attempt;
  return clamp(delay, 0, cap);
}

/** Build an inventory from config and print its total value. */
export function main() {
  const settings = parseConfig("inventory.json");
  const inventory = new Inventory(settings.maxItems);
  inventory.addItem(new Item("widget", 2.5, 4));
  inventory.addItem(new Item("gadget", 10));
  inventory.removeItem("widget");
  console.log(inventory.totalValue());
  console.log(computeBackoff(3));
}
