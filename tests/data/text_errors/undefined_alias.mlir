// expected-error: 2:24: undefined attribute alias '#nowhere'
module attributes {a = #nowhere} {
}
