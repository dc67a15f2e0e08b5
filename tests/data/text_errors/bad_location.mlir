// expected-error: 3:14: expected a location, found '12'
func.func @f() {
  return loc(12)
}
