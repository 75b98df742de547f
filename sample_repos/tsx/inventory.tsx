/**
 * Inventory model shared by the React views.
 */

import { clamp } from "./config";

/** A single stock-keeping unit with a price and a quantity. */
export interface Item {
  name: string;
  price: number;
  quantity: number;
}

/** Sort order for displaying items. */
export enum SortOrder {
  ByName,
  ByValue,
}

/** Predicate used to filter items. */
export type ItemFilter = (item: Item) => boolean;

/** An in-memory collection of items keyed by name. */
export class Inventory {
  private store = new Map<string, Item>();

  constructor(private maxItems: number = 100) {}

  /** Add an item, replacing any existing item with the same name. */
  addItem(item: Item): void {
    if (this.store.size >= this.maxItems) {
      throw new Error("inventory is full");
    }
    this.store.set(item.name, item);
  }

  /** Remove and return the item with the given name. */
  removeItem(name: string): Item | undefined {
    const item = this.store.get(name);
    this.store.delete(name);
    return item;
  }

  /** Return all items, optionally filtered. */
  items(filter?: ItemFilter): Item[] {
    const all = Array.from(this.store.values());
    return filter ? all.filter(filter) : all;
  }

  /** Return the summed value of every item. */
  totalValue(): number {
    return this.items().reduce((sum, item) => sum + item.price * item.quantity, 0);
  }
}

/** Return the retry delay for an attempt using capped exponential growth. */
export function computeBackoff(attempt: number, base = 0.5, cap = 30): number {
  return clamp(base * 2 ** attempt, 0, cap);
}

/** Small badge showing the item count. */
export const CountBadge = ({ inventory }: { inventory: Inventory }) => (
  <span className="badge">{inventory.items().length}</span>
);
