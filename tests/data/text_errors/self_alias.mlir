// expected-error: 2:5: alias '#a' is defined in terms of itself
#a = [#a]
module attributes {x = #a} {
}
