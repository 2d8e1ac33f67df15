package tests

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"

	"github.com/openai/openai-go/v3"
)

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func asError(err error, target **openai.Error) bool {
	return errors.As(err, target)
}

func itoa(n int) string { return strconv.Itoa(n) }
