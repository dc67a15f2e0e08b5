// expected-error: 4:1: expected end of input after the module, found 'module'
module {
}
module {
}
