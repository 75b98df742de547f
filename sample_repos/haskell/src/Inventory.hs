-- | Inventory service: stores items and computes their total value.
module Inventory
  ( Item (..)
  , Inventory
  , Valued (..)
  , emptyInventory
  , addItem
  , removeItem
  , totalValue
  , computeBackoff
  , main
  ) where

import qualified Data.Map.Strict as Map
import Config (Settings (..), clamp, parseConfig)

-- | A single stock-keeping unit with a price and a quantity.
data Item = Item
  { itemName :: String
  , itemPrice :: Double
  , itemQuantity :: Int
  } deriving (Show, Eq)

-- | An in-memory collection of items keyed by name.
data Inventory = Inventory
  { inventoryItems :: Map.Map String Item
  , inventoryMax :: Int
  } deriving (Show)

-- | Anything that can report a monetary value.
class Valued a where
  -- | Return the total value in the base currency.
  value :: a -> Double

instance Valued Item where
  value item = itemPrice item * fromIntegral (itemQuantity item)

instance Valued Inventory where
  value = totalValue

-- | Create an empty inventory holding at most the given number of entries.
emptyInventory :: Int -> Inventory
emptyInventory = Inventory Map.empty

-- | Add an item, replacing any existing item with the same name.
addItem :: Item -> Inventory -> Either String Inventory
addItem item inv
  | Map.size (inventoryItems inv) >= inventoryMax inv = Left "inventory is full"
  | otherwise = Right inv {inventoryItems = Map.insert (itemName item) item (inventoryItems inv)}

-- | Remove the item with the given name.
removeItem :: String -> Inventory -> Inventory
removeItem name inv = inv {inventoryItems = Map.delete name (inventoryItems inv)}

-- | Return the summed value of every item.
totalValue :: Inventory -> Double
totalValue inv = sum (map lineValue (Map.elems (inventoryItems inv)))
  where
    lineValue :: Item -> Double
    lineValue = value

-- | Return the retry delay for an attempt using capped exponential growth.
computeBackoff :: Int -> Double
computeBackoff attempt = clamp 0 30 delay
  where
    delay = 0.5 * 2 ^^ attempt

-- | Build an inventory from config and print its total value.
main :: IO ()
main = do
  settings <- parseConfig "inventory.conf"
  let inv0 = emptyInventory (maxItems settings)
  case addItem (Item "widget" 2.5 4) inv0 >>= addItem (Item "gadget" 10 1) of
    Left err -> putStrLn err
    Right inv -> do
      print (totalValue (removeItem "widget" inv))
      print (computeBackoff 3)
