package server

import "errors"

var errMissingParams = errors.New("server: Config, Pool, Verifier and Registry are required")
