// expected-error: 5:1: expected end of input after the module, found '#loc'
#loc = loc(unknown)
module {
}
#loc
