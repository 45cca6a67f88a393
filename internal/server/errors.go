package server

import "errors"

var errMissingParams = errors.New("server: Config, Pool, Verifier, Registry and Quota are required")
