// The plugin library's own translation unit; GetPjrtApi lives in api.cc and is
// pulled in whole from kiln_capi.
