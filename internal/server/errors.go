package server

import "errors"

var errMissingParams = errors.New("server: Config, Pool, Verifier, Registry, Quota and Tools are required")
