// expected-error: 3:12: successor blocks (branch targets) are not supported
func.func @f() {
  "cf.br"()[^bb1] : () -> ()
^bb1:
  return
}
