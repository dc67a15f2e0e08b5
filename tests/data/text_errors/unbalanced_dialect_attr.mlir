// expected-error: 2:52: expected '>' to close the '<' at 2:37, found ']'
module attributes {a = #sdy.sharding<@mesh, [{"x"}]]>} {
}
