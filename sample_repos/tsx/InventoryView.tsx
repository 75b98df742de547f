/**
 * React views for browsing the inventory.
 */

import React, { useState } from "react";
import { Inventory, Item, computeBackoff } from "./inventory";
import { parseConfig } from "./config";

/** Props for a single inventory row. */
interface ItemRowProps {
  item: Item;
  onRemove: (name: string) => void;
}

/** Renders one item with a remove button. */
export function ItemRow({ item, onRemove }: ItemRowProps) {
  return (
    <li className="item-row">
      <span>{item.name}</span>
      <span>{item.price * item.quantity}</span>
      <button onClick={() => onRemove(item.name)}>Remove</button>
    </li>
  );
}

/** Renders the full inventory and its total value. */
export function InventoryView({ source }: { source: string }) {
  const config = parseConfig(source);
  const [inventory] = useState(() => new Inventory(config.maxItems));
  const [version, setVersion] = useState(0);

  /** Remove an item and force a re-render. */
  function handleRemove(name: string) {
    inventory.removeItem(name);
    setVersion(version + 1);
  }

  const handleAdd = () => {
    inventory.addItem({ name: `item-${version}`, price: 1, quantity: 1 });
    setVersion(version + 1);
  };

  return (
    <section>
      <ul>
        {inventory.items().map((item) => (
          <ItemRow key={item.name} item={item} onRemove={handleRemove} />
        ))}
      </ul>
      <p>Total: {inventory.totalValue()}</p>
      <p>Next retry in {computeBackoff(version)}s</p>
      <button onClick={handleAdd}>Add</button>
    </section>
  );
}
