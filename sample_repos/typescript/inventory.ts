/**
 * Inventory service: stores items and computes their total value.
 */

import { readFileSync } from "fs";
import { parseConfig, clamp, Config } from "./config";

/** Category an item belongs to. */
export enum Category {
  Hardware = "hardware",
  Software = "software",
  Service = "service",
}

/** A single stock-keeping unit with a price and a quantity. */
export interface Item {
  name: string;
  price: number;
  quantity: number;
  category: Category;
}

/** Identifier used to look up items. */
export type ItemKey = string;

/** An in-memory collection of items keyed by name. */
export class Inventory {
  private items: Map<ItemKey, Item> = new Map();

  /** Create an empty inventory holding at most maxItems entries. */
  constructor(private readonly maxItems: number = 100) {}

  /** Add an item, replacing any existing item with the same name. */
  addItem(item: Item): void {
    if (this.items.size >= this.maxItems) {
      throw new Error("inventory is full");
    }
    this.items.set(item.name, item);
  }

  /** Remove and return the item with the given name. */
  removeItem(name: ItemKey): Item | undefined {
    const item = this.items.get(name);
    this.items.delete(name);
    return item;
  }

  /** Return the summed value of every item. */
  totalValue(): number {
    const lineValue = (item: Item): number => item.price * item.quantity;
    let total = 0;
    for (const item of this.items.values()) {
      total += lineValue(item);
    }
    return total;
  }
}

/** Return the retry delay for an attempt using capped exponential growth. */
export function computeBackoff(attempt: number, base = 0.5, cap = 30): number {
  const delay = base * 2 ** attempt;
  return clamp(delay, 0, cap);
}

/** Build an inventory from config and print its total value. */
export function main(path: string): void {
  const config: Config = parseConfig(readFileSync(path, "utf8"));
  const inventory = new Inventory(config.maxItems);
  inventory.addItem({ name: "widget", price: 2.5, quantity: 4, category: Category.Hardware });
  inventory.addItem({ name: "license", price: 10, quantity: 1, category: Category.Software });
  inventory.removeItem("widget");
  console.log(inventory.totalValue());
  console.log(computeBackoff(3));
}
