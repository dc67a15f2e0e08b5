// expected-error: 4:1: resource sections ('{-# ... #-}') are not supported; inline the data as dense<...> literals
module {
}
{-#
  dialect_resources: { builtin: { blob: "0x04000000" } }
#-}
