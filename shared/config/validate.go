package config

// DetailInputValidation asks the validate function to check a submitted input
// file and, when every line is valid, write the provider inputs and start the
// job (submit_batch with input_upload_id or input_uri answers before that).
const DetailInputValidation = "Input Validation Requested"

// EnvValidateQueue is the URL of the validation queue the validate function
// sends fan-out units to (jobs over many files) and reads them from.
const EnvValidateQueue = "MCPBATCH_VALIDATE_QUEUE_URL"

// ValidateQueueReceives is how often a fan-out unit is delivered before it
// goes to the validation queue's dead-letter queue (its maxReceiveCount).
const ValidateQueueReceives = 5
