// expected-error: 2:24: expected an attribute, found an unterminated or malformed string (a string ends on its line; escapes are \\, \", \n, \t and \XX)
module attributes {a = "no end
} {
}
