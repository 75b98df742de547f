using System;
using System.Collections.Generic;
using System.Linq;
using Inventory.Configuration;

namespace Inventory.Service
{
    /// <summary>A single stock-keeping unit with a price and a quantity.</summary>
    public record Item(string Name, decimal Price, int Quantity);

    /// <summary>Anything that can report a monetary value.</summary>
    public interface IValued
    {
        /// <summary>Return the total value in the base currency.</summary>
        decimal TotalValue();
    }

    /// <summary>An in-memory collection of items keyed by name.</summary>
    public class InventoryStore : IValued
    {
        private readonly Dictionary<string, Item> _items = new();
        private readonly int _maxItems;

        /// <summary>Summary statistics for an inventory snapshot.</summary>
        public struct Stats
        {
            public int Count;
            public decimal Value;
        }

        /// <summary>Create an empty inventory holding at most maxItems entries.</summary>
        public InventoryStore(int maxItems)
        {
            _maxItems = maxItems;
        }

        /// <summary>Add an item, replacing any existing item with the same name.</summary>
        public void AddItem(Item item)
        {
            if (_items.Count >= _maxItems)
            {
                throw new InvalidOperationException("inventory is full");
            }
            _items[item.Name] = item;
        }

        /// <summary>Remove the item with the given name.</summary>
        public bool RemoveItem(string name) => _items.Remove(name);

        /// <summary>Return the summed value of every item.</summary>
        public decimal TotalValue()
        {
            return _items.Values.Sum(item => item.Price * item.Quantity);
        }

        /// <summary>Return a Stats snapshot for this inventory.</summary>
        public Stats GetStats() => new Stats { Count = _items.Count, Value = TotalValue() };
    }

    /// <summary>Entry point and retry helpers.</summary>
    public static class Program
    {
        /// <summary>Return the retry delay for an attempt using capped exponential growth.</summary>
        public static double ComputeBackoff(int attempt)
        {
            double delay = 0.5 * Math.Pow(2, attempt);
            return ConfigParser.Clamp(delay, 0.0, 30.0);
        }

        /// <summary>Build an inventory from config and print its total value.</summary>
        public static void Main(string[] args)
        {
            var settings = ConfigParser.ParseConfig("inventory.conf");
            var inventory = new InventoryStore(settings.MaxItems);
            inventory.AddItem(new Item("widget", 2.5m, 4));
            inventory.AddItem(new Item("gadget", 10m, 1));
            inventory.RemoveItem("widget");
            Console.WriteLine(inventory.TotalValue());
            Console.WriteLine(ComputeBackoff(3));
        }
    }
}
