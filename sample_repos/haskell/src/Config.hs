-- | Configuration loading helpers for the inventory service.
module Config
  ( Settings (..)
  , defaultSettings
  , parseConfig
  , clamp
  ) where

import Data.Char (isSpace)
import System.Directory (doesFileExist)

-- | Settings that control the inventory service.
data Settings = Settings
  { maxItems :: Int
  , currency :: String
  } deriving (Show, Eq)

-- | Default settings used when a key is missing.
defaultSettings :: Settings
defaultSettings = Settings {maxItems = 100, currency = "USD"}

-- | Parse a key=value config file, falling back to defaults.
parseConfig :: FilePath -> IO Settings
parseConfig path = do
  exists <- doesFileExist path
  if not exists
    then return defaultSettings
    else foldl applyLine defaultSettings . lines <$> readFile path

-- | Apply one config line to the settings.
applyLine :: Settings -> String -> Settings
applyLine settings line =
  case break (== '=') line of
    (key, '=' : rest) -> update (trim key) (trim rest)
    _ -> settings
  where
    update "max_items" v = settings {maxItems = read v}
    update "currency" v = settings {currency = v}
    update _ _ = settings

-- | Strip leading and trailing whitespace.
trim :: String -> String
trim = f . f
  where
    f = reverse . dropWhile isSpace

-- | Restrict a value to the closed interval [low, high].
clamp :: Ord a => a -> a -> a -> a
clamp low high = max low . min high
