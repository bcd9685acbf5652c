package serve

import "errors"

// ErrConfig: a Config that cannot be served. (Key files are read by the
// caller, with workload.ScanKeyFile, whose errors name the file.)
var ErrConfig = errors.New("serve: bad configuration")
