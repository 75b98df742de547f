//! Inventory service: stores items and computes their total value.

mod config;

use std::collections::HashMap;
use std::fmt;

use crate::config::{clamp, parse_config};

/// Category an item belongs to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Category {
    Hardware,
    Software,
    Service { hourly: bool },
}

/// A single stock-keeping unit with a price and a quantity.
#[derive(Debug, Clone)]
pub struct Item {
    pub name: String,
    pub price: f64,
    pub quantity: u32,
    pub category: Category,
}

/// Anything that can report a monetary value.
pub trait Valued {
    /// Return the total value in the base currency.
    fn value(&self) -> f64;
}

impl Valued for Item {
    fn value(&self) -> f64 {
        self.price * f64::from(self.quantity)
    }
}

/// An in-memory collection of items keyed by name.
pub struct Inventory {
    items: HashMap<String, Item>,
    max_items: usize,
}

impl Inventory {
    /// Create an empty inventory holding at most `max_items` entries.
    pub fn new(max_items: usize) -> Self {
        Inventory { items: HashMap::new(), max_items }
    }

    /// Add an item, replacing any existing item with the same name.
    pub fn add_item(&mut self, item: Item) -> Result<(), String> {
        if self.items.len() >= self.max_items {
            return Err("inventory is full".to_string());
        }
        self.items.insert(item.name.clone(), item);
        Ok(())
    }

    /// Remove and return the item with the given name.
    pub fn remove_item(&mut self, name: &str) -> Option<Item> {
        self.items.remove(name)
    }

    /// Return the summed value of every item.
    pub fn total_value(&self) -> f64 {
        self.items.values().map(|item| item.value()).sum()
    }
}

impl fmt::Display for Inventory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Inventory({} items)", self.items.len())
    }
}

/// Return the retry delay for an attempt using capped exponential growth.
pub fn compute_backoff(attempt: u32) -> f64 {
    let delay = 0.5 * 2f64.powi(attempt as i32);
    clamp(delay, 0.0, 30.0)
}

fn main() {
    let settings = parse_config("inventory.toml");
    let mut inventory = Inventory::new(settings.max_items);
    let widget = Item { name: "widget".into(), price: 2.5, quantity: 4, category: Category::Hardware };
    inventory.add_item(widget).unwrap();
    inventory.remove_item("widget");
    println!("{} {} {}", inventory, inventory.total_value(), compute_backoff(3));
}
