// Copyright 2019 Bytedance Inc. All Rights Reserved.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//  http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package validator

var defaultValidator = New("vd").SetErrorFactory(defaultErrorFactory)

// Default returns the default validator.
// NOTE:
//
//	The tag name is 'vd'
func Default() *Validator {
	return defaultValidator
}

// Validate uses the default validator to validate whether the fields of value is valid.
// NOTE:
//
//	The tag name is 'vd'
//	If checkAll=true, validate all the error.
func Validate(value interface{}, checkAll ...bool) error {
	return defaultValidator.Validate(value, checkAll...)
}

// SetErrorFactory customizes the factory of validation error for the default validator.
// NOTE:
//
//	The tag name is 'vd'
func SetErrorFactory(errFactory func(fieldSelector, msg string) error) {
	defaultValidator.SetErrorFactory(errFactory)
}
