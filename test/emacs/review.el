;;; review.el --- a task's change marked in the file, undone with its code action -*- lexical-binding: t -*-
;; The file's first line asks for a task whose agent replaces text in it; approved with its code
;; action, the change lands in the buffer and is marked with a flymake diagnostic; "Buckley: undo
;; this change" there takes it back. Reported: the marks, and the buffer after each step.
(load (expand-file-name "common.el" (file-name-directory load-file-name)) nil t)

(defun buckley-marks ()
  (with-current-buffer (find-buffer-visiting (getenv "BUCKLEY_FILE"))
    (seq-filter (lambda (text) (string-match-p "changed by «" text)) (mapcar #'flymake-diagnostic-text (flymake-diagnostics)))))

(defun buckley-line-of (needle)
  (goto-char (point-min))
  (search-forward needle)
  (cons (line-beginning-position) (line-end-position)))

(buckley-finish
 (lambda ()
   (let* ((server (buckley-start))
          (buffer (current-buffer)))
     (let ((line (buckley-line-of "// buckley:")))
       (buckley-run-code-action server (car line) (cdr line) "Buckley: run task «REPLACE"))
     (buckley-wait "the approval diagnostic"
                   (lambda () (seq-find (lambda (text) (string-match-p "Write retry\\.ts" text)) (mapcar #'flymake-diagnostic-text (with-current-buffer buffer (flymake-diagnostics))))))
     (with-current-buffer buffer
       (let ((line (buckley-line-of "// buckley:")))
         (buckley-run-code-action server (car line) (cdr line) "Buckley: approve «Write retry.ts»")))
     (buckley-wait "the agent's change in the buffer"
                   (lambda () (with-current-buffer buffer (save-excursion (goto-char (point-min)) (search-forward "tries = 5): Promise<T> {" nil t)))))
     (buckley-wait "the change marked (flymake)" (lambda () (buckley-marks)))
     (buckley-note "marks" (buckley-marks))
     (with-current-buffer buffer
       (buckley-note "changed" (buffer-string))
       (let ((line (buckley-line-of "tries = 5")))
         (buckley-run-code-action server (car line) (cdr line) "Buckley: undo this change (+1 −1)")))
     (buckley-wait "the change undone"
                   (lambda () (with-current-buffer buffer (save-excursion (goto-char (point-min)) (search-forward "tries = 3): Promise<T> {" nil t)))))
     (with-current-buffer buffer
       (buckley-note "undone" (buffer-string)))
     (eglot-shutdown server))))
