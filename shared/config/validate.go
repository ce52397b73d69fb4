package config

// DetailInputValidation asks the validate function to check a submitted input
// file and, when every line is valid, write the provider inputs and start the
// job (submit_batch with input_upload_id or input_uri answers before that).
const DetailInputValidation = "Input Validation Requested"
